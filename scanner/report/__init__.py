"""Report formatters: each turns a `Report` into text for one audience."""
