// ESLint flat config: typescript-eslint's recommended rules over src and test.
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist", "out", "out-test", "node_modules", ".e2e", "esbuild.mjs", "eslint.config.mjs"] },
  ...tseslint.configs.recommended,
  {
    // The e2e suite is CommonJS loaded by the extension host, which provides require("vscode").
    files: ["test/e2e/**/*.js"],
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
);
