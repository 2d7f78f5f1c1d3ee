/**
 * Signs in through the hub's OpenID Connect redirect the way a browser does, with a cookie jar
 * per host and the provider's own login form, without a browser (the e2e test does it in Chromium).
 */
export async function signInThroughProvider(
  hubUrl: string,
  login: string,
  /** Another bridge of the same team deployment that the provider's redirect lands on (as behind a load balancer). */
  callbackVia?: string,
  /** The `next` the sign-in starts with (default `/`). */
  after = "/",
): Promise<{ cookie: string; location: string }> {
  const jar = new Map<string, Map<string, string>>();
  const cookieHeader = (url: URL) =>
    [...(jar.get(url.host) ?? new Map<string, string>()).entries()].map(([k, v]) => `${k}=${v}`).join("; ");
  const remember = (url: URL, response: Response) => {
    const cookies = jar.get(url.host) ?? new Map<string, string>();
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const eq = pair.indexOf("=");
      const value = pair.slice(eq + 1);
      if (value === "" || /max-age=0/i.test(line) || /expires=thu, 01 jan 1970/i.test(line))
        cookies.delete(pair.slice(0, eq));
      else cookies.set(pair.slice(0, eq), value);
    }
    jar.set(url.host, cookies);
  };
  const hubHost = new URL(hubUrl).host;
  const request = async (target: string, init: { method?: string; form?: Record<string, string> } = {}) => {
    let url = new URL(target);
    // A browser sends a host's cookies to every port of it: the other bridge gets the hub's.
    const cookies = cookieHeader(url);
    if (callbackVia && url.host === hubHost && url.pathname === "/auth/oidc/callback")
      url = new URL(`${callbackVia}${url.pathname}${url.search}`);
    const response = await fetch(url, {
      method: init.method ?? "GET",
      redirect: "manual",
      headers: {
        cookie: cookies,
        ...(init.form ? { "content-type": "application/x-www-form-urlencoded" } : {}),
      },
      body: init.form ? new URLSearchParams(init.form).toString() : undefined,
    });
    remember(url.host === new URL(target).host ? url : new URL(target), response);
    return { url, response };
  };

  let next = `${hubUrl}/auth/oidc/start?next=${encodeURIComponent(after)}`;
  for (let hop = 0; hop < 20; hop += 1) {
    const { url, response } = await request(next);
    if (response.status >= 300 && response.status < 400) {
      const location = new URL(response.headers.get("location") ?? "", url).href;
      // Back on the hub after its callback: signed in.
      if (url.pathname === "/auth/oidc/callback") {
        if (new URL(location).pathname === "/signin")
          throw new Error(`the hub refused the sign-in: ${decodeURIComponent(location)}`);
        return { cookie: cookieHeader(new URL(hubUrl)), location: response.headers.get("location") ?? "" };
      }
      next = location;
      continue;
    }
    const html = await response.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    if (response.status !== 200 || !action)
      throw new Error(`unexpected provider page ${response.status}: ${html.slice(0, 300)}`);
    const posted = await request(new URL(action, url).href, {
      method: "POST",
      form: { prompt: "login", login, password: "any-password" },
    });
    next = new URL(posted.response.headers.get("location") ?? "", posted.url).href;
  }
  throw new Error("too many redirects");
}
