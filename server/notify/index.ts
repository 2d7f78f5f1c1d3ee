export { isActionToken } from "./action-tokens";
export { Notifier, noticeOwner } from "./notifier";
export type { NotifierOptions } from "./notifier";
export { loadVapidKeys } from "./vapid";
