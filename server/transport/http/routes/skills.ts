import path from "node:path";
import * as z from "zod";
import { SkillsQuery, SkillView } from "../../../protocol";
import { WorldlineError } from "../../../errors";
import type { Route } from "../router";

export const skillRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/v1/skills",
    doc: {
      summary:
        "Skills (SKILL.md folders) of a workspace's .worldline/skills, .agents/skills, .claude/skills and $WORLDLINE_HOME/skills",
      tags: ["skills"],
      query: SkillsQuery,
      response: z.array(SkillView),
    },
    handler: async ({ services, query }) => {
      const { workspace } = SkillsQuery.parse(Object.fromEntries(query));
      if (workspace !== undefined && !path.isAbsolute(workspace))
        throw new WorldlineError("skills:invalid", "`workspace` must be an absolute path.");
      if (!services.skills) throw new WorldlineError("skills:unavailable", "This bridge has no skills.");
      return services.skills.list(workspace);
    },
  },
];
