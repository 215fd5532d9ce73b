// The run explorer: hash routes, the API key gate, and one page at a time in <main>.

import { forgetKey, storedKey } from "./api.js";
import { el } from "./dom.js";
import { renderFleet } from "./pages/fleet.js";
import { renderIdentity } from "./pages/identity.js";
import { renderKeyForm } from "./pages/key.js";
import { renderRun } from "./pages/run.js";
import { renderRuns } from "./pages/runs.js";

const main = document.getElementById("main");
const forgetButton = document.getElementById("forget-key");

// [pattern on location.hash, page] in order; the first match wins.
const ROUTES = [
  [/^#\/runs\/(.+)$/, (match, page) => renderRun(page, decodeURIComponent(match[1]))],
  [/^#\/runs(?:\?(.*))?$/, (match, page) => renderRuns(page, new URLSearchParams(match[1] ?? ""))],
  [/^#\/identities\/(.+)$/, (match, page) => renderIdentity(page, decodeURIComponent(match[1]))],
  [/^#\/fleet(?:\?(.*))?$/, (match, page) => renderFleet(page, new URLSearchParams(match[1] ?? ""))],
];

function notFound(page) {
  page.append(
    el("h1", { tabindex: "-1" }, "Page not found"),
    el("p", {}, "There is no page at ", el("code", {}, location.hash), ". ", el("a", { href: "#/runs" }, "Go to the runs list"), "."),
  );
  return Promise.resolve();
}

/** Renders the page for the current hash into a fresh container; late answers for a page the user
 * has left land in a detached container and change nothing. */
function route() {
  if (!location.hash.startsWith("#/")) {
    location.replace("#/runs");
    return;
  }
  const page = el("div", { class: "page" });
  main.replaceChildren(page);
  main.dataset.state = "loading";
  forgetButton.hidden = !storedKey();
  if (!storedKey()) {
    renderKeyForm(page, route);
    main.dataset.route = location.hash;
    main.dataset.state = "ready";
    return;
  }
  const found = ROUTES.map(([pattern, render]) => [location.hash.match(pattern), render]).find(([match]) => match);
  const rendering = found ? found[1](found[0], page) : notFound(page);
  page.querySelector("h1")?.focus({ preventScroll: true });
  const hash = location.hash;
  rendering.finally(() => {
    if (!page.isConnected) return;
    main.dataset.route = hash;
    main.dataset.state = "ready";
  });
}

forgetButton.addEventListener("click", () => {
  forgetKey();
  route();
});

// The skip link targets <main> without touching the hash, which belongs to the router.
document.getElementById("skip-link").addEventListener("click", (event) => {
  event.preventDefault();
  main.focus();
});

window.addEventListener("hashchange", route);
route();
