"""Views of the results, above the results they render: the text and HTML table of a decode
floor (:mod:`~roofline_decode.views.table`), its per-layer table
(:mod:`~roofline_decode.views.layers`, ``print(floor.layers())``) and a sweep as an xarray Dataset
(:mod:`~roofline_decode.views.frame`).  A result calls its view on first use (``str(floor)``,
``sweep.to_xarray()``); nothing below imports a view at module level.
"""
