from .volume_restrictions import VolumeRestrictions

__all__ = ["VolumeRestrictions"]
