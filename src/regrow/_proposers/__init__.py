"""3. Who proposes fixes: the protocol, the chain, the cache, the engine and the models."""
