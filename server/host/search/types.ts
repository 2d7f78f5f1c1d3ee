/** One search request, shared by the ripgrep and JavaScript back ends. */
export interface SearchRequest {
  pattern: string;
  /** Absolute folder or file to search. */
  root: string;
  ignoreCase: boolean;
  contextLines: number;
  include: string[];
  exclude: string[];
  /** Stop after this many matching lines (one more is collected to know there are more). */
  maxMatches: number;
  signal?: AbortSignal;
}

export interface SearchLine {
  number: number;
  text: string;
  isMatch: boolean;
}

export interface FileMatches {
  /** Absolute path of the file. */
  absolute: string;
  /** Lines in file order, matches and context, without duplicates. */
  lines: SearchLine[];
}

export interface SearchOutcome {
  files: FileMatches[];
  matchCount: number;
  /** True when the search stopped at maxMatches. */
  truncated: boolean;
}
