export { ACTION_TOKEN_TTL_MS, isActionToken } from "./action-tokens";
export { Notifier, noticeOwner } from "./notifier";
export type { NoticeAccess, NotifierOptions } from "./notifier";
export { loadVapidKeys } from "./vapid";
export type { VapidKeys } from "./vapid";
