"""The firmware flow: artifact -> project -> build -> flash -> run over the RPC."""
