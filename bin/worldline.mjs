#!/usr/bin/env node
// The `worldline` command: runs the TypeScript bridge through tsx's loader.
import { register } from "tsx/esm/api";

register();
await import("../server/cli/index.ts");
