"""The outcome labels that run.py, oracle.py and report.py share (this module imports nothing,
so that run.py's parent process stays free of torch and ember)."""

# The start of a wrong outcome's detail where every differing sample is float16, bfloat16 or
# float32 and ember's result is at least as near the float64 answer as PyTorch's.
ROUNDING = "rounding, ember nearer float64"
