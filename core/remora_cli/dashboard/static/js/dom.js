// Building the page without ever parsing text as HTML: every string from the
// project (names, answers, diffs, feedback) becomes a text node.

/** An element: h("p", {class: "x"}, "text", child, ...). */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) element.addEventListener(key.slice(2), value);
    else if (key === "class") element.className = value;
    else if (key === "dataset") Object.assign(element.dataset, value);
    else element.setAttribute(key, value === true ? "" : String(value));
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replace what `element` shows. */
export function show(element, ...children) {
  element.replaceChildren();
  append(element, children);
  return element;
}

/** A time of day (seconds since the epoch). */
export function clock(seconds) {
  if (seconds === null || seconds === undefined) return "";
  return new Date(seconds * 1000).toLocaleTimeString([], { hour12: false });
}

/** How long from `start` to `end` (now while running). */
export function took(start, end) {
  if (!start) return "";
  const seconds = Math.max(0, (end || Date.now() / 1000) - start);
  return seconds < 60 ? `${seconds.toFixed(1)} s` : `${Math.round(seconds / 60)} min`;
}

let toastTimer = 0;
/** A short message at the bottom of the page. */
export function toast(message, bad = false) {
  const element = document.getElementById("toast");
  show(element, message);
  element.classList.toggle("bad", bad);
  element.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (element.hidden = true), bad ? 8000 : 3000);
}

/** For a panel whose refreshes can overlap (one set off by events, one by a
 * click): `const current = turn()` at a refresh's start gives a check that
 * stays true until a later refresh starts. An answer that comes back after
 * a later one was asked for must not be shown over it (a graph run picked
 * while an event's refresh was under way lost its steps for good). */
export function latestOnly() {
  let asked = 0;
  return () => {
    const mine = ++asked;
    return () => mine === asked;
  };
}

/** Run `work` at most once per `ms`, with the latest arguments. */
export function debounce(work, ms) {
  let timer = 0;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => work(...args), ms);
  };
}

/** A unified diff, each line its own text node coloured by its sign. */
export function diffView(diff) {
  const lines = String(diff || "").split("\n");
  return h(
    "pre",
    { class: "diff" },
    lines.map((line) => {
      const sign = line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : line.startsWith("@@") ? "hunk" : "";
      return h("span", { class: sign }, line + "\n");
    }),
  );
}
