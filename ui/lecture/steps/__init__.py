"""The lecture's steps, one module each: its SLUG (its address), TITLE, IDEA (one line)
and `draw()`. Their order is ui/lecture/syllabus.py's STEPS."""
