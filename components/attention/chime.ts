"use client";

/** Two short sine notes, generated: no audio file to ship or load. */
const NOTES_HZ = [880, 1318.5];
const NOTE_S = 0.12;
const GAIN = 0.08;

let context: AudioContext | null = null;

/** Plays the attention sound; silently does nothing where audio is unavailable or still locked. */
export function playChime(): void {
  try {
    context ??= new AudioContext();
    // Audio still locked until the page is clicked: this chime is skipped.
    if (context.state === "suspended") void context.resume().catch(() => undefined);
    const start = context.currentTime;
    NOTES_HZ.forEach((hz, index) => {
      const oscillator = context!.createOscillator();
      const gain = context!.createGain();
      const at = start + index * NOTE_S;
      oscillator.type = "sine";
      oscillator.frequency.value = hz;
      gain.gain.setValueAtTime(0, at);
      gain.gain.linearRampToValueAtTime(GAIN, at + 0.01);
      gain.gain.exponentialRampToValueAtTime(0.0001, at + NOTE_S);
      oscillator.connect(gain).connect(context!.destination);
      oscillator.start(at);
      oscillator.stop(at + NOTE_S + 0.02);
    });
  } catch {
    // No WebAudio (or blocked by the browser's autoplay policy): the notification still shows.
  }
}
