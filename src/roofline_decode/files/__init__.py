"""Model files: the GGUF and safetensors (+ index) header readers.

Only headers are read (metadata, tensor names, types and shapes); no tensor data.  Every count,
length and depth is checked against the file size before anything is allocated
(:mod:`~roofline_decode.files.untrusted`), and tensor shapes must agree with the metadata
(:mod:`~roofline_decode.files.tensor_shapes`).  The GGML block types and llama.cpp's
quantisation mixtures the GGUF reader uses live with the number formats
(:mod:`roofline_decode.formats`).
"""
