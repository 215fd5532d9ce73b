// Asks once for an API key and keeps it in this browser (localStorage) for every later visit.

import { saveKey } from "../api.js";
import { el } from "../dom.js";

export function renderKeyForm(page, onSaved) {
  document.title = "API key · Repute";
  const input = el("input", {
    id: "api-key",
    name: "api-key",
    type: "password",
    required: true,
    autocomplete: "off",
    spellcheck: "false",
    "aria-describedby": "api-key-help",
  });
  const form = el(
    "form",
    { class: "key-form" },
    el("label", { for: "api-key" }, "API key"),
    input,
    el("p", { id: "api-key-help", class: "hint" },
      "A key with the read scope (", el("code", {}, "repute keys create --scope read"), "). It is kept in this ",
      "browser only and sent as a Bearer token to the API."),
    el("button", { type: "submit" }, "Save key"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    saveKey(input.value);
    onSaved();
  });
  page.append(el("h1", { tabindex: "-1" }, "Connect to Repute"), form);
  input.focus();
}
