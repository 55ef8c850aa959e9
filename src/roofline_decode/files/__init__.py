"""Model files: GGML block types and llama.cpp mixtures, GGUF and safetensors header readers.

Only headers are read (metadata, tensor names, types and shapes); no tensor data.
"""
