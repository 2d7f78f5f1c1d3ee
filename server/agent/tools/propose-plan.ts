import * as z from "zod";
import { defineTool, type Tool } from "../../tools";

/** A plan longer than this is a document, not a plan the user can approve at a glance. */
const MAX_PLAN_CHARS = 20_000;

const ProposePlanParameters = z.object({
  plan: z
    .string()
    .min(1)
    .max(MAX_PLAN_CHARS)
    .describe("The plan in Markdown: the goal, the files to change and how, the commands to run, and how to check it."),
});

export interface PlanModeState {
  /** True while the session is in plan mode. */
  active(): boolean;
}

/**
 * `propose_plan`, Worldline's ExitPlanMode: in plan mode the model ends its research with this
 * call; the UI shows the plan as a card with "Approve plan" (leaves plan mode and asks the agent
 * to carry it out) and "Keep planning". Always in the tool list, so the list stays the same
 * across mode switches (a fixed prefix is what providers cache).
 */
export function createProposePlanTool(state: PlanModeState): Tool {
  return defineTool({
    name: "propose_plan",
    description: [
      "Only in plan mode: present your finished plan to the user for approval.",
      "Call it once you have read enough to know exactly what to change; the user approves it or asks you to keep planning.",
      "After calling it, stop and wait: do not start the work in the same turn.",
    ].join(" "),
    parameters: ProposePlanParameters,
    needsApproval: () => ({
      level: "none",
      subject: "propose_plan",
      scope: "propose_plan",
      description: "Show a plan for approval",
      risk: "none",
    }),
    async execute({ plan }) {
      if (!state.active()) {
        return "Plan mode is off: there is nothing to approve. Carry on with the work.";
      }
      return {
        output:
          "The plan is shown to the user with Approve plan / Keep planning. Stop here and wait for their answer; do not start the work yet.",
        isError: false,
        display: { plan },
      };
    },
  });
}
