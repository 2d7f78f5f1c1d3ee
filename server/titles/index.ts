export { SessionTitles } from "./service";
export { cleanModelTitle, firstWordsTitle, TITLE_MAX_CHARS } from "./words";
