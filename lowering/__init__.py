"""Stage 2: graph passes, fusion into kernels, lowering to loop IR, memory planning."""
