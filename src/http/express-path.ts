/** `/pets/{petId}` -> `/pets/:petId` */
export const toExpressPath = (template: string): string => template.replace(/\{([^}]+)\}/g, ':$1');
