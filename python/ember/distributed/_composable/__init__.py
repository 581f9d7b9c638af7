"""torch.distributed._composable: where PyTorch 2.4 and 2.5 kept FSDP2 (fully_shard)."""
