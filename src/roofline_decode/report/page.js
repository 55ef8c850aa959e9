// roofline_decode report: the batch/context control. It reads the precomputed grid (the JSON in
// #report-grid: the library's numbers in SI units) and rewrites the cells of the floor table,
// the deployment table under a layout, the per-layer tables and the notes for the chosen grid
// point. A URL fragment "#batch=64&context=8192" picks the point on load (the browser test uses it); every update is
// written to the console and to <body data-batch data-context>.
(function () {
  "use strict";
  var grid = JSON.parse(document.getElementById("report-grid").textContent);
  var batchInput = document.getElementById("batch-index");
  var contextInput = document.getElementById("context-index");

  function num(value) {
    return typeof value === "string" ? Number(value) : value;
  }

  // the page's number format (report/page.py's display(): the same rule in Python)
  function display(value) {
    if (Number.isNaN(value)) { return "n/a"; }
    if (!Number.isFinite(value)) { return value > 0 ? "inf" : "-inf"; }
    if (value === 0) { return "0"; }
    var size = Math.abs(value);
    if (size >= 1e-3 && size < 1e6) { return String(Number(value.toPrecision(4))); }
    return value.toExponential(3).replace("e+", "e");
  }

  function fill(cell, value, scale) {
    if (!cell) { return; }
    if (scale === null) {
      cell.dataset.value = String(value);
      cell.textContent = typeof value === "boolean" ? (value ? "yes" : "no") : String(value);
      cell.className = typeof value === "string" ? value : (value ? "yes" : "no");
    } else {
      var n = num(value);
      cell.dataset.value = String(n);
      cell.textContent = display(n * scale);
    }
  }

  function find(selector) {
    return document.querySelector(selector);
  }

  function update() {
    var i = Number(batchInput.value);
    var j = Number(contextInput.value);
    var k = i * grid.contexts.length + j;
    var batch = grid.batches[i];
    var context = grid.contexts[j];
    find("#batch-value").textContent = String(batch);
    find("#context-value").textContent = String(context);
    grid.devices.forEach(function (device) {
      var id = CSS.escape(device.id);
      grid.floor_columns.forEach(function (column) {
        fill(find('td[data-table="floors"][data-device="' + id + '"][data-key="' + column[0] + '"]'),
             device.columns[column[0]][k], column[2]);
      });
      device.layers.forEach(function (row) {
        var layer = CSS.escape(row.layer);
        grid.layer_columns.forEach(function (column) {
          fill(find('table.layers[data-device="' + id + '"] tr[data-layer="' + layer + '"] td[data-key="' +
                    column[0] + '"]'), row[column[0]][k], column[2]);
        });
      });
      if (device.layout) {  // the layout floor over the same grid (the busiest device's numbers)
        grid.layout_columns.forEach(function (column) {
          fill(find('td[data-table="layout"][data-device="' + id + '"][data-key="' + column[0] + '"]'),
               device.layout[column[0]][k], column[2]);
        });
      }
      var notes = find('ul.notes[data-device="' + id + '"]');
      if (notes) {
        notes.textContent = "";
        device.notes[k].forEach(function (index) {
          var item = document.createElement("li");
          item.textContent = grid.notes[index];
          notes.appendChild(item);
        });
        if (!device.notes[k].length) {
          var none = document.createElement("li");
          none.textContent = "none: the point fits and no assumption beyond the conventions applies";
          notes.appendChild(none);
        }
      }
    });
    document.body.dataset.batch = String(batch);
    document.body.dataset.context = String(context);
    var first = grid.devices[0];
    console.log("roofline-report " + JSON.stringify({
      batch: batch, context: context, device: first.id, step_time_s: num(first.columns.step_time_s[k])
    }));
  }

  function fromFragment() {
    var wanted = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (part) {
      var pair = part.split("=");
      if (pair.length === 2) { wanted[pair[0]] = Number(pair[1]); }
    });
    var moved = false;
    if ("batch" in wanted && grid.batches.indexOf(wanted.batch) >= 0) {
      batchInput.value = String(grid.batches.indexOf(wanted.batch));
      moved = true;
    }
    if ("context" in wanted && grid.contexts.indexOf(wanted.context) >= 0) {
      contextInput.value = String(grid.contexts.indexOf(wanted.context));
      moved = true;
    }
    return moved;
  }

  batchInput.addEventListener("input", update);
  contextInput.addEventListener("input", update);
  if (fromFragment()) { update(); }
  document.body.dataset.ready = "yes";
}());
