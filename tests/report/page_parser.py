"""Read a report page back: its cells with their data attributes, its grid JSON, its tags."""

import json
from html.parser import HTMLParser


class ReportPage(HTMLParser):
    """``cells``: one dict per <td> with data attributes (``text`` its text, ``layer`` and
    ``table_device`` of the enclosing row and table); ``tags``: (tag, attrs) of every start tag;
    ``grid``: the parsed JSON of #report-grid; ``notes``: device -> list of note texts;
    ``texts``: (tag, class, device) -> text of each <p> or <li> with a data-device (the
    deployment search's answers, the expected numbers' labels)."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.cells, self.tags, self.notes = [], [], {}
        self._cell = self._layer = self._table_device = self._notes_device = self._item = None
        self._script, self._grid_text = None, []
        self.texts, self._text = {}, None
        self.feed(text)
        self.grid = json.loads("".join(self._grid_text))

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if tag == "table":
            self._table_device = attrs.get("data-device")
        elif tag == "tr":
            self._layer = attrs.get("data-layer")
        elif tag == "td" and any(k.startswith("data-") for k in attrs):
            self._cell = {**{k[5:]: v for k, v in attrs.items() if k.startswith("data-")}, "text": "",
                          "layer": self._layer, "table_device": self._table_device}
        elif tag == "ul" and "data-device" in attrs:
            self._notes_device = attrs["data-device"]
            self.notes[self._notes_device] = []
        elif tag in ("p", "li") and "data-device" in attrs:
            self._text = (tag, attrs.get("class"), attrs["data-device"])
            self.texts[self._text] = ""
        if tag == "li" and self._notes_device:
            self._item = []
        elif tag == "script":
            self._script = attrs.get("id")

    def handle_endtag(self, tag):
        if tag in ("p", "li") and self._text is not None and self._text[0] == tag:
            self._text = None
        if tag == "td" and self._cell is not None:
            self.cells.append(self._cell)
            self._cell = None
        elif tag == "li" and self._item is not None:
            self.notes[self._notes_device].append("".join(self._item))
            self._item = None
        elif tag == "ul":
            self._notes_device = None
        elif tag == "script":
            self._script = None
        elif tag == "table":
            self._table_device = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell["text"] += data
        if self._item is not None:
            self._item.append(data)
        if self._text is not None:
            self.texts[self._text] += data
        if self._script == "report-grid":
            self._grid_text.append(data)
