/** Live previews of a session's dev servers and the ports they listen on (DESIGN.md §18). */
export { Previews, type PreviewSession, type PreviewsOptions } from "./service";
export { servePreviewsFirst } from "./front-door";
export { parsePreviewHost, previewOrigin, type PreviewTarget } from "./host-name";
export { PORT_POLL_MS, type ProcessRoot, type SessionPort } from "./session-ports";
export { FRAME_PATH } from "./picker";
export { BrowserSessions, BROWSER_VIEWPORT, NAVIGATION_TIMEOUT_MS, type Screenshot } from "./browsers";
