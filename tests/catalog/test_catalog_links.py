"""The scale-up domain (``[interconnect.domain_size]``) and the scale-out link (``[scale_out]``):
parsed into ``Interconnect.domain_size`` and ``Accelerator.scale_out`` with their figures, and a
bad value refused with the file's path and the field."""

from __future__ import annotations

import pytest

from roofline_decode import catalog
from roofline_decode.errors import InvalidValueError, SpecFileError
from roofline_decode.specs.accelerator import Accelerator, Interconnect
from roofline_decode.specs.spec_file import json_schema, load_spec_file

from .helpers import ACCELERATOR_FILES, raw
from .test_catalog_loading import GOOD, write

LINKS = GOOD + """
[interconnect]
name = "NVLink 4 (18 links)"
direction = "bidirectional"
scope = "aggregate"

[interconnect.bandwidth]
value = 900
unit = "GB/s"
kind = "datasheet"
source = "sheet"

[interconnect.domain_size]
value = 8
unit = "devices"
kind = "datasheet"
source = "sheet"

[scale_out]
name = "ConnectX-7 InfiniBand NDR"
direction = "per_direction"
scope = "aggregate"

[scale_out.bandwidth]
value = 400
unit = "Gbit/s"
kind = "datasheet"
source = "sheet"
"""


def test_domain_and_scale_out_load_with_their_figures(tmp_path):
    gpu = load_spec_file(write(tmp_path, "linked.toml", LINKS))
    assert gpu.interconnect.domain_size == 8 and isinstance(gpu.interconnect.domain_size, int)
    assert gpu.scale_out.bandwidth == 50e9 and gpu.scale_out.per_direction_bandwidth == 50e9
    assert gpu.scale_out.domain_size is None
    assert gpu.figures["interconnect.domain_size"].unit == "devices"
    assert gpu.figures["interconnect.domain_size"].si_value == 8
    assert gpu.figures["scale_out.bandwidth"].value == 400


def test_without_them_both_are_none(tmp_path):
    gpu = load_spec_file(write(tmp_path, "plain.toml", GOOD))
    assert gpu.interconnect is None and gpu.scale_out is None


@pytest.mark.parametrize(("old", "new", "field", "says"), [
    ('value = 8\nunit = "devices"', 'value = 8.0\nunit = "devices"', "interconnect.domain_size.value", "integer"),
    ('value = 8\nunit = "devices"', 'value = 1\nunit = "devices"', "interconnect.domain_size.value", "2"),
    ('value = 8\nunit = "devices"', 'value = 0\nunit = "devices"', "interconnect.domain_size.value", "2"),
    ('value = 8\nunit = "devices"', 'value = "8"\nunit = "devices"', "interconnect.domain_size.value", "integer"),
    ('value = 8\nunit = "devices"', 'value = true\nunit = "devices"', "interconnect.domain_size.value", "integer"),
    ('value = 8\nunit = "devices"', 'value = 8\nunit = "GPUs"', "interconnect.domain_size.unit", "devices"),
    ('value = 8\nunit = "devices"\nkind = "datasheet"\nsource = "sheet"',
     'value = 8\nunit = "devices"\nkind = "datasheet"\nsource = "nowhere"', "interconnect.domain_size.source", "nowhere"),
    ('value = 400\nunit = "Gbit/s"', 'value = 400\nunit = "devices"', "scale_out.bandwidth.unit", "GB/s"),
    ('value = 400\nunit = "Gbit/s"', 'value = 400e-10\nunit = "Gbit/s"', "scale_out", "outside"),
    ('[scale_out.bandwidth]', '[scale_out.domain_size]\nvalue = 8\nunit = "devices"\nkind = "datasheet"\n'
     'source = "sheet"\n\n[scale_out.bandwidth]', "scale_out.domain_size", "unknown field"),
])
def test_a_bad_link_is_refused_with_path_and_field(tmp_path, old, new, field, says):
    assert old in LINKS
    path = write(tmp_path, "bad-link.toml", LINKS.replace(old, new, 1))
    with pytest.raises(SpecFileError) as caught:
        load_spec_file(path)
    message = str(caught.value)
    assert str(path) in message and field in message and says in message, message


def test_the_domain_is_a_whole_number_of_at_least_two():
    link = dict(name="NVLink", bandwidth=9e11, direction="bidirectional", scope="aggregate")
    assert Interconnect(**link, domain_size=72).domain_size == 72
    for bad in (1, 0, -8, 8.0, True, "8"):
        with pytest.raises(InvalidValueError, match="domain_size"):
            Interconnect(**link, domain_size=bad)


def test_a_scale_out_link_has_no_domain():
    gpu = dict(name="g", memory_bandwidth=3.35e12, memory_capacity=80e9)
    nic = Interconnect(name="ConnectX-7", bandwidth=50e9, direction="per_direction", scope="aggregate")
    assert Accelerator(**gpu, scale_out=nic).scale_out == nic
    with pytest.raises(InvalidValueError, match="scale_out.*domain_size: a scale-out network has no fixed domain"):
        Accelerator(**gpu, scale_out=nic.replace(domain_size=8))
    with pytest.raises(InvalidValueError, match="scale_out: bandwidth: 50 B/s is outside"):
        Accelerator(**gpu, scale_out=nic.replace(bandwidth=50.0))


def test_replace_drops_the_stale_link_figures(tmp_path):
    gpu = load_spec_file(write(tmp_path, "linked.toml", LINKS))
    faster = gpu.replace(scale_out=gpu.scale_out.replace(bandwidth=100e9))
    assert "scale_out.bandwidth" not in faster.figures and "interconnect.domain_size" in faster.figures
    wider = gpu.replace(interconnect=gpu.interconnect.replace(domain_size=16))
    assert "interconnect.domain_size" not in wider.figures and "scale_out.bandwidth" in wider.figures


def test_the_schema_describes_both():
    schema = json_schema("accelerator")
    assert "scale_out" in schema["properties"]
    count = schema["$defs"]["CountFigure"]
    assert count["properties"]["unit"]["const"] == "devices" and count["properties"]["value"]["minimum"] == 2
    assert "domain_size" in schema["$defs"]["InterconnectEntry"]["properties"]
    assert "domain_size" not in schema["$defs"]["LinkEntry"]["properties"]


BASEPOD = ("https://docs.nvidia.com/dgx-basepod/reference-architecture-infrastructure-foundation-enterprise-ai/"
           "latest/core-components.html")
HABANA = "https://docs.habana.ai/en/latest/Management_and_Monitoring/Network_Configuration/index.html"
ROCM = "https://rocm.docs.amd.com/en/latest/how-to/rocm-for-ai/inference/benchmark-docker/"

#: device -> (domain size and the URL of its source, scale-out figure as printed: value, unit, kind, URL);
#: None where no page read states it.  (gb300 is pinned with its other figures in test_catalog_new_devices.)
LINK_VALUES = {
    "h100-sxm": ((8, BASEPOD), (400, "Gbit/s", "datasheet", BASEPOD)),
    "h200-sxm": ((8, BASEPOD), (400, "Gbit/s", "datasheet", BASEPOD)),
    "b200": ((8, BASEPOD), (400, "Gbit/s", "datasheet", BASEPOD)),
    "b300": ((8, "https://rillor.com/insights/connectx-7-vs-connectx-8-and-nvlink5"),
             (800, "Gbit/s", "datasheet", "https://rillor.com/insights/connectx-7-vs-connectx-8-and-nvlink5")),
    "gb200": ((72, "https://docs.nvidia.com/dgx/dgxgb200-user-guide/hardware.html"), None),
    "mi300x": ((8, ROCM + "vllm-mori-distributed.html"), (400, "Gbit/s", "derived", BASEPOD)),
    "mi325x": ((8, ROCM + "vllm-mori-distributed.html"), (400, "Gbit/s", "derived", BASEPOD)),
    "mi355x": ((8, ROCM + "sglang-mori-distributed.html"),
               (400, "Gbit/s", "derived", "https://amd.com/en/products/network-interface-cards/pensando.html")),
    "gaudi3": ((8, HABANA), (75, "GB/s", "datasheet", HABANA)),
    "gaudi2": ((8, HABANA), (37.5, "GB/s", "datasheet", HABANA)),
    "tpu-v5e": ((256, "https://cloud.google.com/tpu/docs/v5e"), (25, "Gbit/s", "derived", "https://cloud.google.com/tpu/docs/v5e")),
    "tpu-v6e": ((256, "https://cloud.google.com/tpu/docs/v6e"), None),
    "tpu-v5p": ((6144, "https://docs.cloud.google.com/tpu/docs/v5p"),
                (50, "Gbit/s", "datasheet", "https://docs.cloud.google.com/tpu/docs/v5p")),
}


@pytest.mark.parametrize("device", sorted(LINK_VALUES))
def test_bundled_domains_and_scale_out_match_their_sources(device):
    gpu = catalog.load_accelerator(device)
    (domain, domain_url), scale_out = LINK_VALUES[device]
    assert gpu.interconnect.domain_size == domain
    assert gpu.sources[gpu.figures["interconnect.domain_size"].source].url == domain_url
    if scale_out is None:
        assert gpu.scale_out is None
        return
    value, unit, kind, url = scale_out
    figure = gpu.figures["scale_out.bandwidth"]
    assert (figure.value, figure.unit, figure.kind) == (value, unit, kind)
    assert gpu.sources[figure.source].url == url
    assert gpu.scale_out.direction == "per_direction" and gpu.scale_out.domain_size is None
    # a scale-out NIC is slower than the scale-up link it complements
    assert gpu.scale_out.per_direction_bandwidth < gpu.interconnect.per_direction_bandwidth


def test_every_bundled_domain_and_scale_out_is_pinned():
    with_links = {p.stem for p in ACCELERATOR_FILES
                  if "domain_size" in raw(p).get("interconnect", {}) or "scale_out" in raw(p)}
    assert with_links == set(LINK_VALUES) | {"gb300"}
