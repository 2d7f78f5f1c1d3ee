;; The screen mirror's plain-text scan (mirror-scan.mjs runs it, mirror-skip.mjs uses it),
;; 16 bytes at a time with WebAssembly SIMD: it runs over every byte of a flood, and a
;; vector compare is several times faster than JavaScript's best (four bytes per step).
;; Compiled into mirror-scan.mjs; tests/unit/pty/mirror-scan.test.ts checks the two match.
;;
;; The caller copies the bytes to scan to TEXT (32) and sets what is around them: the byte
;; before TEXT is the byte before the text (a space if none), and the 16 bytes after it are
;; spaces, so the last block may run past the text's end.
(module
  (memory (export "memory") 1)

  ;; Index of the last byte of the `length` bytes at TEXT that is not plain, or -1. Plain:
  ;; printable ASCII, TAB, LF, CR, and bytes from 0x80 up, except 0x80–0x9F right after
  ;; 0xC2 (a C1 control, such as CSI, in UTF-8).
  (func (export "lastNotPlain") (param $length i32) (result i32)
    (local $at i32)
    (local $bytes v128)
    (local $mask i32)
    (local $space v128) (local $tab v128) (local $lf v128) (local $cr v128)
    (local $del v128) (local $c1 v128) (local $c1_span v128) (local $c2 v128)
    (local.set $space (i8x16.splat (i32.const 0x20)))
    (local.set $tab (i8x16.splat (i32.const 0x09)))
    (local.set $lf (i8x16.splat (i32.const 0x0a)))
    (local.set $cr (i8x16.splat (i32.const 0x0d)))
    (local.set $del (i8x16.splat (i32.const 0x7f)))
    (local.set $c1 (i8x16.splat (i32.const 0x80)))
    (local.set $c1_span (i8x16.splat (i32.const 0x20)))
    (local.set $c2 (i8x16.splat (i32.const 0xc2)))
    ;; Just past the last block: TEXT + length rounded up to a whole block.
    (local.set $at
      (i32.add (i32.const 32) (i32.and (i32.add (local.get $length) (i32.const 15)) (i32.const -16))))
    (block $none
      (loop $blocks
        (br_if $none (i32.le_u (local.get $at) (i32.const 32)))
        (local.set $at (i32.sub (local.get $at) (i32.const 16)))
        (local.set $bytes (v128.load (local.get $at)))
        (local.set $mask
          (i8x16.bitmask
            (v128.or
              (v128.or
                ;; C0 controls but TAB, LF and CR.
                (v128.andnot
                  (i8x16.lt_u (local.get $bytes) (local.get $space))
                  (v128.or
                    (v128.or
                      (i8x16.eq (local.get $bytes) (local.get $tab))
                      (i8x16.eq (local.get $bytes) (local.get $lf)))
                    (i8x16.eq (local.get $bytes) (local.get $cr))))
                (i8x16.eq (local.get $bytes) (local.get $del)))
              ;; 0x80–0x9F whose previous byte is 0xC2.
              (v128.and
                (i8x16.lt_u (i8x16.sub (local.get $bytes) (local.get $c1)) (local.get $c1_span))
                (i8x16.eq
                  (v128.load (i32.sub (local.get $at) (i32.const 1)))
                  (local.get $c2))))))
        (br_if $blocks (i32.eqz (local.get $mask)))
        ;; The highest lane with a hit; lane i is the byte at $at + i.
        (return
          (i32.sub
            (i32.add (local.get $at) (i32.sub (i32.const 31) (i32.clz (local.get $mask))))
            (i32.const 32)))))
    (i32.const -1)))
