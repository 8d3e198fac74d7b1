"""Document embedding by distillation (Burian 2023)."""
