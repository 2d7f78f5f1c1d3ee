"use client";

import { useRef, type KeyboardEvent, type PointerEvent } from "react";

/** Keyboard users resize by this many pixels per arrow press. */
const KEY_STEP_PX = 16;

/**
 * A drag handle between two panes. `onDelta` gets the pixel movement since the
 * drag started (positive = right/down); arrow keys move it too.
 */
export function Splitter({
  direction,
  label,
  onResize,
  start,
  testId,
}: {
  direction: "vertical" | "horizontal";
  label: string;
  start: () => number;
  onResize: (size: number) => void;
  testId: string;
}) {
  const origin = useRef<{ pos: number; size: number } | null>(null);
  const sign = testId.includes("agent") || testId.includes("bottom") ? -1 : 1;
  const axis = (event: PointerEvent) => (direction === "vertical" ? event.clientX : event.clientY);

  const onPointerDown = (event: PointerEvent<HTMLDivElement>) => {
    event.currentTarget.setPointerCapture(event.pointerId);
    origin.current = { pos: axis(event), size: start() };
  };
  const onPointerMove = (event: PointerEvent<HTMLDivElement>) => {
    if (!origin.current) return;
    onResize(Math.max(0, origin.current.size + sign * (axis(event) - origin.current.pos)));
  };
  const onKeyDown = (event: KeyboardEvent) => {
    const back = direction === "vertical" ? "ArrowLeft" : "ArrowUp";
    const forward = direction === "vertical" ? "ArrowRight" : "ArrowDown";
    if (event.key !== back && event.key !== forward) return;
    event.preventDefault();
    onResize(Math.max(0, start() + sign * (event.key === forward ? KEY_STEP_PX : -KEY_STEP_PX)));
  };

  // A focusable separator is a widget: it must say where it stands (aria-valuenow, in pixels here).
  const size = Math.round(start());
  return (
    <div
      role="separator"
      aria-orientation={direction}
      aria-label={label}
      aria-valuenow={size}
      aria-valuemin={0}
      aria-valuetext={`${size} pixels`}
      tabIndex={0}
      data-testid={testId}
      onPointerDown={onPointerDown}
      onPointerMove={onPointerMove}
      onPointerUp={() => (origin.current = null)}
      onKeyDown={onKeyDown}
      className={`shrink-0 bg-border/60 transition-colors hover:bg-accent/60 focus-visible:bg-accent ${
        direction === "vertical" ? "w-1 cursor-col-resize" : "h-1 cursor-row-resize"
      }`}
    />
  );
}
