import type { IncomingMessage } from "node:http";
import * as z from "zod";
import {
  CreateMemoryBody,
  DeleteMemoryQuery,
  MemoryQuery,
  MemorySettings,
  MemoryView,
  UpdateMemorySettingsBody,
} from "../../../protocol";
import { WorldlineError } from "../../../errors";
import type { MemoryReader } from "../../../memory";
import { personOfRequest, visibleSessions } from "../../people";
import type { BridgeServices } from "../../services";
import { readJson } from "../io";
import type { Route } from "../router";

const Deleted = z.object({ deleted: z.literal(true), id: z.string() });
const tags = ["memory"];

export const memoryRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/v1/memory",
    doc: {
      summary: "List memories (newest first, or by relevance to `q`)",
      tags,
      query: MemoryQuery,
      response: z.array(MemoryView),
    },
    handler: async ({ services, query, req }) =>
      memoryOf(services).list(MemoryQuery.parse(Object.fromEntries(query)), await readerOf(req, services)),
  },
  {
    method: "POST",
    path: "/api/v1/memory",
    status: 201,
    doc: { summary: "Store a memory", tags, body: CreateMemoryBody, response: MemoryView },
    handler: async ({ services, req }) =>
      memoryOf(services).add(
        CreateMemoryBody.parse(await readJson(req)),
        undefined,
        undefined,
        personOfRequest(req)?.id,
      ),
  },
  {
    method: "DELETE",
    path: "/api/v1/memory",
    doc: { summary: "Delete a memory by `?id=`", tags, query: DeleteMemoryQuery, response: Deleted },
    handler: async ({ services, query, req }) => {
      const { id } = DeleteMemoryQuery.parse(Object.fromEntries(query));
      await memoryOf(services).remove(id, await readerOf(req, services));
      return { deleted: true, id };
    },
  },
  {
    method: "GET",
    path: "/api/v1/memory/settings",
    doc: { summary: "Memory settings: the post-turn memory decision and reflection", tags, response: MemorySettings },
    handler: async ({ services }) => memoryOf(services).settings(),
  },
  {
    method: "PATCH",
    path: "/api/v1/memory/settings",
    doc: {
      summary: "Turn the post-turn memory decision or reflection on or off",
      tags,
      body: UpdateMemorySettingsBody,
      response: MemorySettings,
    },
    handler: async ({ services, req }) =>
      memoryOf(services).updateSettings(UpdateMemorySettingsBody.parse(await readJson(req))),
  },
  {
    method: "DELETE",
    path: "/api/v1/memory/:id",
    doc: { summary: "Delete a memory", tags, response: Deleted },
    handler: async ({ services, params, req }) => {
      await memoryOf(services).remove(params.id, await readerOf(req, services));
      return { deleted: true, id: params.id };
    },
  },
];

/** A named person reads their own memories and those of sessions they see; the launch token reads all. */
async function readerOf(req: IncomingMessage, services: BridgeServices): Promise<MemoryReader | undefined> {
  const person = personOfRequest(req);
  if (!person) return undefined;
  return { id: person.id, sessionIds: await visibleSessions(req, services), admin: person.role === "admin" };
}

function memoryOf(services: BridgeServices) {
  if (!services.memory) throw new WorldlineError("memory:unavailable", "This bridge keeps no memories.");
  return services.memory;
}
