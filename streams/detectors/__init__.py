"""The stream detectors: what a detector is (`base`), the one list of them (`registry`), and one
module per detector."""
