import { z } from "zod";
import {
  CreateMemoryBody,
  DeleteMemoryQuery,
  MemoryQuery,
  MemorySettings,
  MemoryView,
  UpdateMemorySettingsBody,
} from "../../../protocol";
import { WorldlineError } from "../../../errors";
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
    handler: async ({ services, query }) => memoryOf(services).list(MemoryQuery.parse(Object.fromEntries(query))),
  },
  {
    method: "POST",
    path: "/api/v1/memory",
    status: 201,
    doc: { summary: "Store a memory", tags, body: CreateMemoryBody, response: MemoryView },
    handler: async ({ services, req }) => memoryOf(services).add(CreateMemoryBody.parse(await readJson(req))),
  },
  {
    method: "DELETE",
    path: "/api/v1/memory",
    doc: { summary: "Delete a memory by `?id=`", tags, query: DeleteMemoryQuery, response: Deleted },
    handler: async ({ services, query }) => {
      const { id } = DeleteMemoryQuery.parse(Object.fromEntries(query));
      await memoryOf(services).remove(id);
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
    handler: async ({ services, params }) => {
      await memoryOf(services).remove(params.id);
      return { deleted: true, id: params.id };
    },
  },
];

function memoryOf(services: BridgeServices) {
  if (!services.memory) throw new WorldlineError("memory:unavailable", "This bridge keeps no memories.");
  return services.memory;
}
