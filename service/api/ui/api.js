// The REST API as the pages use it: every call carries the key the user pasted once.

const KEY_STORAGE = "repute.apiKey";
export const RUNS_PAGE_SIZE = 50;
const EVENTS_LIMIT = 10000; // the API's largest page of events
const CHART_RUNS_LIMIT = 500;

export const storedKey = () => localStorage.getItem(KEY_STORAGE);
export const saveKey = (key) => localStorage.setItem(KEY_STORAGE, key.trim());
export const forgetKey = () => localStorage.removeItem(KEY_STORAGE);

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// API paths are resolved against the page, so the UI keeps working behind a path prefix.
function apiUrl(path, params = {}) {
  const url = new URL(`../v1/${path}`, document.baseURI);
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") url.searchParams.set(name, value);
  }
  return url;
}

async function get(path, params) {
  let response;
  try {
    response = await fetch(apiUrl(path, params), {
      headers: { Authorization: `Bearer ${storedKey()}`, Accept: "application/json" },
    });
  } catch (error) {
    throw new ApiError(0, `The service could not be reached (${error.message}).`);
  }
  if (!response.ok) {
    const problem = await response.json().catch(() => ({}));
    throw new ApiError(response.status, problem.detail || problem.title || response.statusText);
  }
  return response.json();
}

const segment = encodeURIComponent;

export const listRuns = (filters, cursor) =>
  get("runs", { ...filters, cursor, limit: RUNS_PAGE_SIZE });
export const identityRuns = (identity) => get("runs", { identity, limit: CHART_RUNS_LIMIT });
export const getRun = (runId) => get(`runs/${segment(runId)}`);
export const runEvents = (runId) => get(`runs/${segment(runId)}/events`, { limit: EVENTS_LIMIT });
const SPANS_LIMIT = 5000; // the API's largest page of spans
export const runSpans = (runId) => get(`runs/${segment(runId)}/spans`, { limit: SPANS_LIMIT });
export const listIdentities = (q = "") => get("identities", { sort: "overall", order: "desc", limit: 1000, q });
export const reputation = (identity) => get(`identities/${segment(identity)}/reputation`);
export const reputationExplanation = (identity) => get(`identities/${segment(identity)}/reputation/explain`);
export const reputationStatement = (identity) => get(`identities/${segment(identity)}/statement`);
// Every tenant's public statement keys, beside the API (no key needed to read them).
export const statementKeysUrl = () => new URL("../.well-known/repute-keys.json", document.baseURI).href;
export const HISTORY_DAYS = 90;
export const reputationHistory = (identity) => get(`identities/${segment(identity)}/history`, { days: HISTORY_DAYS });

// Firing alerts; a service without the alerts endpoint (404) simply has none.
export const firingAlerts = () =>
  get("alerts").then(
    (body) => body.alerts,
    (error) => {
      if (error.status === 404) return [];
      throw error;
    },
  );
