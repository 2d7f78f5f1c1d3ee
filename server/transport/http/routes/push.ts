import { DeletePushSubscriptionBody, PushDevice, PushDevices, PushKey, PushSubscriptionBody } from "../../../protocol";
import { WorldlineError } from "../../../errors";
import { noticeOwner, type Notifier } from "../../../notify";
import { readJson } from "../io";
import { personOfRequest } from "../../people";
import type { Route, RouteContext } from "../router";

/** Web Push devices, each stored with the person or the token that made it. */
export const pushRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/v1/push/key",
    doc: { summary: "The bridge's VAPID public key, for PushManager.subscribe", tags: ["push"], response: PushKey },
    handler: async ({ services }) => ({ public_key: await notifierOf(services).publicKey() }),
  },
  {
    method: "GET",
    path: "/api/v1/push/subscriptions",
    doc: { summary: "The caller's devices that get pushes", tags: ["push"], response: PushDevices },
    handler: async (ctx) => notifierOf(ctx.services).devices(ownerOf(ctx)),
  },
  {
    method: "POST",
    path: "/api/v1/push/subscriptions",
    status: 201,
    doc: {
      summary: "Push to this device: a PushSubscription's JSON and a device name",
      tags: ["push"],
      body: PushSubscriptionBody,
      response: PushDevice,
    },
    handler: async (ctx) => {
      const body = PushSubscriptionBody.parse(await readJson(ctx.req));
      return notifierOf(ctx.services).subscribe(ownerOf(ctx), body);
    },
  },
  {
    method: "DELETE",
    path: "/api/v1/push/subscriptions",
    doc: { summary: "Stop pushing to a device", tags: ["push"], body: DeletePushSubscriptionBody },
    handler: async (ctx) => {
      const { endpoint } = DeletePushSubscriptionBody.parse(await readJson(ctx.req));
      if (!(await notifierOf(ctx.services).unsubscribe(ownerOf(ctx), endpoint)))
        throw new WorldlineError("push:not_found", "No device of yours has that endpoint.");
      return { deleted: true };
    },
  },
];

function notifierOf(services: RouteContext["services"]): Notifier {
  if (!services.push) throw new WorldlineError("push:unavailable", "This bridge sends no pushes.");
  return services.push;
}

/** The person, or the token the request came with (the launch token is `default`). */
function ownerOf({ req, services }: RouteContext): string {
  const owner = noticeOwner({ personId: personOfRequest(req)?.id, tokenName: services.auth.requestTokenName(req) });
  if (!owner) throw new WorldlineError("auth:forbidden", "Devices belong to a person or a token.");
  return owner;
}
