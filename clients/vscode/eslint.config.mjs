// ESLint flat config: typescript-eslint's recommended rules over src and test.
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist", "out", "out-test", "node_modules", "esbuild.mjs", "eslint.config.mjs"] },
  ...tseslint.configs.recommended,
);
