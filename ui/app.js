// app.js - placeholder of the page of 'strobe ui' (the page is written
// apart): lists the sessions through /api/sessions, as text.
"use strict";
fetch("api/sessions").then(r => r.json()).then(j => {
	const main = document.getElementById("app");
	main.textContent = "";
	for (const s of j.sessions) {
		const p = document.createElement("p");
		p.textContent = "session " + s.id + " " + s.name + ": " + s.samples + " samples";
		main.appendChild(p);
	}
});
