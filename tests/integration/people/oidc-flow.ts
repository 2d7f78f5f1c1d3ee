/**
 * Signs in through the hub's OpenID Connect redirect the way a browser does, with a cookie jar
 * per host and the provider's own login form, without a browser (the e2e test does it in Chromium).
 */
export async function signInThroughProvider(hubUrl: string, login: string): Promise<{ cookie: string }> {
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
  const request = async (target: string, init: { method?: string; form?: Record<string, string> } = {}) => {
    const url = new URL(target);
    const response = await fetch(url, {
      method: init.method ?? "GET",
      redirect: "manual",
      headers: {
        cookie: cookieHeader(url),
        ...(init.form ? { "content-type": "application/x-www-form-urlencoded" } : {}),
      },
      body: init.form ? new URLSearchParams(init.form).toString() : undefined,
    });
    remember(url, response);
    return { url, response };
  };

  let next = `${hubUrl}/auth/oidc/start?next=${encodeURIComponent("/")}`;
  for (let hop = 0; hop < 20; hop += 1) {
    const { url, response } = await request(next);
    if (response.status >= 300 && response.status < 400) {
      const location = new URL(response.headers.get("location") ?? "", url).href;
      // Back on the hub after its callback: signed in.
      if (url.pathname === "/auth/oidc/callback") {
        const hub = new URL(hubUrl);
        if (!location.startsWith(hubUrl) || new URL(location).pathname === "/signin")
          throw new Error(`the hub refused the sign-in: ${decodeURIComponent(location)}`);
        return { cookie: cookieHeader(hub) };
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
