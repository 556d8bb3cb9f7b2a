"""Files in and out: graph files (JSON, CSV), plan files, dan IR text, the readers
(`frontends`) and writers (`backends`) by format, and all-or-nothing writes (`atomic`)."""
