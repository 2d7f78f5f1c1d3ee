/** Live previews of a session's dev servers and the ports they listen on. */
export { Previews } from "./service";
export { servePreviewsFirst } from "./front-door";
export { BrowserSessions } from "./browsers";
