/**
 * The chat page's progressive enhancement: with JS on, a submit posts the same form with `fetch`
 * asking for `text/event-stream` and shows the reply as text as its `delta` events arrive (the same
 * SSE events as the API's streamed turns), then as the sanitized HTML the server drew from its
 * markdown (`reply_html` of the `done` event, `markdown.ts`); the conversation id of the `start`
 * event goes into the hidden field. Any answer that is not a stream (a refusal such as no credits left) falls back to
 * the plain form post, which nothing has run for yet.
 */

/** The inline script; `appName` labels the reply. */
export const chatScript = (appName: string): string => `(() => {
  const form = document.getElementById("chat");
  const list = document.getElementById("messages");
  if (!form || !window.fetch || !window.TextDecoder) return;
  const appName = ${JSON.stringify(appName).replace(/</g, "\\u003c")};
  const add = (role, label, text) => {
    const item = document.createElement("div");
    item.className = "message " + role;
    const who = document.createElement("strong");
    who.textContent = label + ":";
    const body = document.createElement(role === "user" ? "span" : "div");
    if (role !== "user") body.className = "reply streaming";
    body.textContent = text;
    item.append(who, " ", body);
    list.append(item);
    return body;
  };
  let busy = false;
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (busy) return;
    busy = true;
    const data = new FormData(form);
    const response = await fetch(form.action, { method: "POST", body: new URLSearchParams(data), headers: { accept: "text/event-stream" } }).catch(() => null);
    if (!response || !(response.headers.get("content-type") || "").startsWith("text/event-stream")) { busy = false; form.submit(); return; }
    add("user", "You", String(data.get("message") || ""));
    form.elements.message.value = "";
    const reply = add("assistant", appName, "");
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) break;
      buffer += decoder.decode(chunk.value, { stream: true });
      let end;
      while ((end = buffer.indexOf("\\n\\n")) !== -1) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (frame.startsWith(":")) continue;
        const name = (frame.match(/^event: (.*)$/m) || [])[1];
        const json = frame.split("\\n").filter((line) => line.startsWith("data: ")).map((line) => line.slice(6)).join("\\n");
        const payload = json ? JSON.parse(json) : {};
        if (name === "start" && payload.conversation_id) form.elements.conversation_id.value = payload.conversation_id;
        if (name === "delta") reply.textContent += payload.text;
        if (name === "done") {
          reply.className = "reply";
          if (typeof payload.reply_html === "string") reply.innerHTML = payload.reply_html;
          else reply.textContent = payload.reply;
        }
        if (name === "error") reply.textContent = (payload.error && payload.error.message) || "The App could not answer.";
      }
    }
    busy = false;
  });
})();`
