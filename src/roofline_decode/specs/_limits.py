"""Upper bounds of the counts a Model accepts, shared by the Model spec and the config reader."""

#: Most layers a Model may have (real models have a few hundred at most; readers loop over them).
MAX_LAYERS = 2**16
#: Largest width, count or window a Model field accepts: 2**53, the largest whole number a float
#: holds exactly, so no product of fields overflows a float.
MAX_SIZE = 2**53
