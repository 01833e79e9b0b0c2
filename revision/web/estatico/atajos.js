// Keyboard shortcuts of the reviewer app: a reviewer goes through hundreds of items a day.
// Any element with data-atajo="<key>" is clicked (buttons, links, checkboxes) or focused
// (text fields) when that key is pressed outside a text field. On the queue, j/k move the
// selection and Enter/o open it. Inside a field: Esc leaves it, Ctrl+Enter submits its form.
(function () {
  "use strict";
  function escribiendo(el) {
    return el && (el.tagName === "INPUT" && el.type !== "checkbox" || el.tagName === "TEXTAREA" || el.tagName === "SELECT");
  }
  function filas() { return Array.prototype.slice.call(document.querySelectorAll("tr.fila")); }
  var actual = -1;
  function seleccionar(i) {
    var fs = filas();
    if (!fs.length) { return; }
    actual = Math.max(0, Math.min(fs.length - 1, i));
    fs.forEach(function (f, j) { f.classList.toggle("seleccionada", j === actual); });
    fs[actual].scrollIntoView({ block: "nearest" });
  }
  document.addEventListener("DOMContentLoaded", function () {
    if (filas().length) { seleccionar(0); }
    filas().forEach(function (f) {
      f.addEventListener("click", function (ev) {
        if (ev.target.tagName !== "A") { window.location = f.dataset.url; }
      });
    });
    var ver = document.getElementById("ver-atajos");
    var dialogo = document.getElementById("atajos");
    if (ver && dialogo) { ver.addEventListener("click", function () { dialogo.showModal(); }); }
  });
  document.addEventListener("keydown", function (ev) {
    var t = ev.target;
    if (escribiendo(t)) {
      if (ev.key === "Escape") { t.blur(); }
      if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey) && t.form) { ev.preventDefault(); t.form.requestSubmit(); }
      return;
    }
    if (ev.ctrlKey || ev.metaKey || ev.altKey) { return; }
    if (ev.key === "j") { seleccionar(actual + 1); return; }
    if (ev.key === "k") { seleccionar(actual - 1); return; }
    if ((ev.key === "Enter" || ev.key === "o") && actual >= 0 && filas().length) {
      window.location = filas()[actual].dataset.url; return;
    }
    var el = document.querySelector('[data-atajo="' + ev.key + '"]');
    if (!el) { return; }
    ev.preventDefault();
    if (escribiendo(el)) { el.focus(); if (el.select) { el.select(); } } else { el.click(); }
  });
})();
