"""The commands (dan-opt, dan-export, dan-replay, dan-bench, dan-gen, dan-batch), the
driver between reading an input and writing an output (`driver`), the batch orchestration
(`batch`), progress bars and the speed benchmarks."""
