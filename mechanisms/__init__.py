"""Shipped mechanism declarations. Each module defines `build()` returning a mechsym Mechanism."""

MODELS = {
    "fourbar": "mechanisms.fourbar",
    "slider-crank": "mechanisms.slider_crank",
}
