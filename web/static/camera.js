// Camera page: refresh the frame and draw seat zones and recognised cards over it.
"use strict";
(() => {
  const img = document.getElementById("frame-img"), svg = document.getElementById("overlay");
  const NS = "http://www.w3.org/2000/svg";
  const add = (tag, attrs, text) => {
    const e = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    svg.append(e); return e;
  };
  const pts = (poly) => poly.map((p) => p.join(",")).join(" ");

  function draw(st) {
    const status = document.getElementById("camera-status");
    status.textContent = st.state + (st.message ? ": " + st.message : "");
    status.className = "alert " + (st.state === "running" ? "good" : "warn");
    const [w, h] = st.frame_size || [img.naturalWidth || 640, img.naturalHeight || 480];
    svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
    svg.textContent = "";
    for (const z of st.zones || []) {
      if (!Array.isArray(z.polygon)) continue;
      add("polygon", { points: pts(z.polygon), fill: "#ffd54a22", stroke: "#ffd54a", "stroke-width": 3 });
      add("text", { x: z.polygon[0][0] + 6, y: z.polygon[0][1] + 24, fill: "#ffd54a", "font-size": 22 }, `seat ${z.seat}`);
    }
    for (const d of st.detections || []) {
      let x, y;
      if (Array.isArray(d.box)) { [x, y] = d.box; add("rect", { x, y, width: d.box[2], height: d.box[3], fill: "none", stroke: "#00e676", "stroke-width": 3 }); }
      else if (Array.isArray(d.polygon)) { [x, y] = d.polygon[0]; add("polygon", { points: pts(d.polygon), fill: "none", stroke: "#00e676", "stroke-width": 3 }); }
      else continue;
      const conf = typeof d.confidence === "number" ? ` ${Math.round(d.confidence * 100)}%` : "";
      add("text", { x, y: y - 6, fill: "#00e676", "font-size": 24, "font-weight": 700 }, `${d.card}${conf}`);
    }
    const dl = document.getElementById("camera-details"); dl.textContent = "";
    for (const [k, v] of Object.entries(st)) {
      if (["zones", "detections", "available"].includes(k)) continue;
      const dt = document.createElement("dt"); dt.textContent = k.replace(/_/g, " ");
      const dd = document.createElement("dd"); dd.textContent = typeof v === "object" ? JSON.stringify(v) : String(v);
      dl.append(dt, dd);
    }
  }

  async function tick() {
    try {
      const r = await fetch("/api/camera", { cache: "no-store" });
      draw(await r.json());
      img.src = "/api/camera.jpg?t=" + Date.now();
    } catch (e) { /* the next tick tries again */ }
  }
  draw(JSON.parse(document.getElementById("camera-initial").textContent));
  setInterval(tick, 1000);
})();
