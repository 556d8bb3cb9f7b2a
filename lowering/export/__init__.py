"""Timeline exports of a replayed plan: a Chrome trace (`chrome`, `flows`), pictures
(`pictures`), each buffer's residency (`residency`), written as one set (`timeline`)."""
