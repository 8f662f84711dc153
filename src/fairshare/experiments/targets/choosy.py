"""placeholder while writing"""

TARGETS = ()
