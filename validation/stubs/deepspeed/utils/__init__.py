import logging

logger = logging.getLogger("deepspeed-stub")
