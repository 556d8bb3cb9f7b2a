"""`dan-batch`'s orchestration: one kernel in, its files and summary rows out (`kernel`),
the run over an executor (`run`), and the batch's files (`output`)."""
