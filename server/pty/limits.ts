/**
 * Tunable numbers of the terminal subsystem, each with the reason for its value.
 * Flow-control sizes are in bytes: the bridge moves raw pty bytes and never decodes
 * them, so bytes are what it can count (VS Code counts UTF-16 chars; for terminal
 * output the two are within a small factor).
 */

/** Output is merged for this long before it is sent: VS Code's TerminalDataBufferer uses 5 ms, one burst becomes one frame and nobody perceives it. */
export const OUTPUT_BATCH_MS = 5;

/**
 * While output streams (the batch before was at least FLOOD_BATCH_BYTES and was sent less than OUTPUT_BATCH_MS ago), a
 * batch gathers for this long instead: the viewer is still parsing the batches before it, so nothing shows later, and a
 * flood reaches it in full MAX_BATCH_BYTES frames rather than ~5 ms ones. Each frame costs the viewer more than its
 * bytes (a socket.io packet, an acknowledgement, and a timer tick whenever xterm.js has parsed all it has): in
 * alternating harness runs the client ratio went from ~0.88 to ~0.93 (with the watermarks below).
 */
export const FLOOD_BATCH_MS = 10;
/** A batch at least this large (~25 MB/s within OUTPUT_BATCH_MS) means output is streaming (see FLOOD_BATCH_MS). */
export const FLOOD_BATCH_BYTES = 128 * 1024;

/**
 * A batch is sent early at this size, so a flood never sits in one buffer and the watermarks are checked often. Large
 * enough that a flood costs few frames: each one costs the bridge a socket.io packet and the viewer a wake-up (and,
 * once its xterm has run dry, a timer tick before parsing resumes). bench/pty.ts: ~6.7 ms of bridge CPU per MB at
 * 128 KB, ~5 at 512 KB, with the viewer idle less often.
 */
export const MAX_BATCH_BYTES = 512 * 1024;

/**
 * The buffers batches are read into (server/pty/batch-buffers.ts): a batch goes on in the rest of its buffer while at
 * least MAX_BATCH_BYTES remain, so every batch can reach full size, and a quarter at most is left unused. With one
 * batch's worth per buffer, the batch after a timer's flush only had the rest of it: a flood's frames were ~270 KB
 * (median) instead of ~430 KB, and each frame costs the viewer more than its bytes (xterm.js waits a timer tick
 * whenever it has parsed all it has).
 */
export const BATCH_BUFFER_BYTES = 4 * MAX_BATCH_BYTES;

/**
 * Above this many unacknowledged bytes for any viewer the pty is paused. VS Code uses 100 K chars, but then the page
 * idles while the shell resumes and the next batch crosses the wire. 3 MB is six full batches in flight, ~50 ms of
 * parsing for xterm.js in a page (so Ctrl-C still shows within a glance), and it bounds what a viewer can make the
 * bridge buffer. With 2 MB (four frames) and full-size flood frames the page ran dry between them (ratio ~0.81).
 */
export const HIGH_WATERMARK_BYTES = 3_000_000;

/**
 * Below this for every viewer the pty resumes: half the high mark, so the page still has ~25 ms of output to parse
 * while the next batches arrive (VS Code's 5 K lets it run dry); pausing and resuming a pty is cheap, so the narrower
 * band costs nothing.
 */
export const LOW_WATERMARK_BYTES = 1_500_000;

/** A viewer that keeps the shell paused this long is dropped to "resync" so the others go on; it gets a fresh screen once it has caught up. */
export const STALLED_VIEWER_MS = 2_000;

/**
 * While paused, the shell's pid is polled this often: node-pty drops unread output 200 ms after exit if its socket is
 * paused, so an exit must resume reading before that.
 */
export const PAUSED_EXIT_POLL_MS = 40;

/**
 * Lines of scrollback kept by the bridge's screen mirror and sent to a new viewer: enough to scroll back a screenful
 * or ten, small enough to snapshot in a few ms.
 */
export const MIRROR_SCROLLBACK_LINES = 1_000;

/** Terminals a session may have open at once: more tabs than anyone reads, few enough that a runaway script can't fork-bomb shells. */
export const MAX_TERMINALS_PER_SESSION = 10;

/** Terminals across all sessions: each is a shell plus a headless mirror (~a few MB). */
export const MAX_TERMINALS = 64;

/** Size a terminal starts with before any viewer reports its own. */
export const DEFAULT_COLS = 80;
export const DEFAULT_ROWS = 24;

/**
 * Raw output each terminal keeps for viewers that are catching up and for a screen mirror that fell behind: several
 * screens of scrollback even for long lines, and bounded (a flood holds at most this much per terminal).
 */
export const MIRROR_RING_BYTES = 4 * 1024 * 1024;

/**
 * Output the screen mirror gathers in the ring before its worker parses it in one piece (sooner when a viewer needs the
 * screen: a snapshot, a resize). Parsing is most of the bridge's CPU per MB of terminal output; in a 1 MB piece of
 * ordinary output ~90% of the lines scroll out and are skipped unparsed (mirror-skip.mjs), and a snapshot never waits
 * for more than that much to be parsed (a few ms). A quarter of the ring: the rest is room for the worker to finish.
 */
export const MIRROR_LAZY_BYTES = 1024 * 1024;
/**
 * Output not yet on the mirror's screen (gathered, or being parsed) beyond which the shell is paused: only a worker
 * really slower than the shell reaches it, and it stays below the ring's size by more than a batch (pausing takes a
 * batch to bite), so the ring never drops output the mirror has not parsed while the shell runs.
 */
export const MIRROR_HIGH_WATERMARK_BYTES = 3_000_000;
/** The mirror lets the shell resume below this, still above MIRROR_LAZY_BYTES so the next piece can gather. */
export const MIRROR_LOW_WATERMARK_BYTES = 2_000_000;
/** The mirror worker is stopped after this long without any terminal; the next terminal starts it again (tens of ms). */
export const MIRROR_WORKER_IDLE_MS = 5_000;

/** After this many crashes of the mirror worker the bridge stops restarting it; new viewers then get a replay of the ring instead of a screen. */
export const MIRROR_WORKER_MAX_CRASHES = 5;

/**
 * The mirror worker's young generation (V8 semi-spaces), in MB: its garbage is short-lived output chunks, and V8's
 * default lets it reach tens of MB of RSS during a flood for nothing.
 */
export const MIRROR_WORKER_YOUNG_MB = 8;
