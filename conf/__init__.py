"""lincls's Hydra configs; a package, so an installed lincls reads them as pkg://lincls.conf."""
