/*
 * dom.js - the page's few DOM helpers, shared by app.js and flame.js:
 * an element by id, a new element whose text is set as text (never as
 * HTML: the names in the data come from profiled processes), and
 * emptying a node.  Exports strobeDom.
 */
var strobeDom = (function () {
"use strict";

function $(id) { return document.getElementById(id); }

function el(tag, cls, text) {
	var e = document.createElement(tag);
	if (cls) e.className = cls;
	if (text !== undefined && text !== null) e.textContent = String(text);
	return e;
}

function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

return { $: $, el: el, clear: clear };
})();
